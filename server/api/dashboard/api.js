// The node's REST API, as the dashboard calls it: JSON answers, the error envelope's message,
// and the API token (kept in the tab's session storage, sent as a header, never in a URL).

export const TOKEN_KEY = "ledger-node.api-token";

export async function api(path, withToken) {
  const headers = { Accept: "application/json" };
  const token = withToken ? sessionStorage.getItem(TOKEN_KEY) : null;
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, { headers, cache: "no-store", credentials: "omit" });
  } catch (e) {
    return { status: 0, body: null, message: "the node cannot be reached" };
  }
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  const message =
    body && body.error && body.error.message ? body.error.message : `HTTP ${response.status}`;
  return { status: response.status, body, message };
}
