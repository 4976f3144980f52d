"""A paho-mqtt client over WebSocket that holds `milestone-info/confirmed` for DURATION seconds
and subscribes to / unsubscribes from `blocks` every 10 s (moving between audiences under
load); reports whether milestone indexes arrived consecutive, and the blocks it got.

    mover.py DURATION [PORT]"""
import json
import sys
import threading
import time

import paho.mqtt.client as mqtt

duration = float(sys.argv[1])
port = int(sys.argv[2]) if len(sys.argv) > 2 else 14265
seen, blocks = [], [0]
lock = threading.Lock()


def on_message(_client, _userdata, msg):
    with lock:
        if msg.topic == "milestone-info/confirmed":
            seen.append(json.loads(msg.payload)["index"])
        elif msg.topic == "blocks":
            blocks[0] += 1


c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"mover-{port}",
                transport="websockets", protocol=mqtt.MQTTv311)
c.ws_set_options(path="/api/mqtt/v1")
c.on_message = on_message
c.connect("127.0.0.1", port, keepalive=30)
c.loop_start()
c.subscribe("milestone-info/confirmed")
on, moves = False, 0
end = time.time() + duration
while time.time() < end:
    time.sleep(10)
    (c.unsubscribe if on else c.subscribe)("blocks")
    on = not on
    moves += 1
c.loop_stop()
with lock:
    gaps = [(a, b) for a, b in zip(seen, seen[1:]) if b != a + 1]
    print(f"mover: {len(seen)} milestones {seen[:1]}..{seen[-1:]}, gaps or repeats {gaps}, "
          f"{blocks[0]} blocks, {moves} moves")
