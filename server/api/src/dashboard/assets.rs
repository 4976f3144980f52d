//! The dashboard's files, embedded at compile time from `server/api/dashboard/`, and the
//! headers they are served with: their content type and a Content-Security-Policy that lets
//! the page load and fetch from its own origin only.

use axum::http::{header, HeaderName, HeaderValue};

/// One embedded file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asset {
    /// Its name under `/dashboard/`.
    pub name: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

/// The page itself (served at `/` and `/dashboard`).
pub const INDEX: Asset = Asset {
    name: "index.html",
    content_type: "text/html; charset=utf-8",
    body: include_bytes!("../../dashboard/index.html"),
};

/// Every file under `/dashboard/{name}`: the page, its script modules (`app.js` imports the
/// others), its style sheet, uPlot with its license, the icon.
pub const ASSETS: &[Asset] = &[
    INDEX,
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/app.js"),
    },
    Asset {
        name: "api.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/api.js"),
    },
    Asset {
        name: "bech32.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/bech32.js"),
    },
    Asset {
        name: "charts.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/charts.js"),
    },
    Asset {
        name: "dom.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/dom.js"),
    },
    Asset {
        name: "format.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/format.js"),
    },
    Asset {
        name: "history.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/history.js"),
    },
    Asset {
        name: "panels.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/panels.js"),
    },
    Asset {
        name: "views.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/views.js"),
    },
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../dashboard/style.css"),
    },
    Asset {
        name: "uPlot.iife.min.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../dashboard/uPlot.iife.min.js"),
    },
    Asset {
        name: "uPlot.min.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../dashboard/uPlot.min.css"),
    },
    Asset {
        name: "uPlot.LICENSE",
        content_type: "text/plain; charset=utf-8",
        body: include_bytes!("../../dashboard/uPlot.LICENSE"),
    },
    Asset {
        name: "favicon.svg",
        content_type: "image/svg+xml",
        body: include_bytes!("../../dashboard/favicon.svg"),
    },
];

/// The file called `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The policy of every dashboard answer: scripts, styles, images and fetches from the node
/// itself only; no inline script or style, no frames, no plugins, no form posts.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The headers every dashboard file is served with, besides its content type.
pub fn security_headers() -> [(HeaderName, HeaderValue); 4] {
    [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        // Revalidated on each load: a new node version serves new files under the same names.
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_has_a_unique_name_a_body_and_a_type_matching_its_extension() {
        for (i, a) in ASSETS.iter().enumerate() {
            assert!(!a.body.is_empty(), "{} is empty", a.name);
            assert!(
                ASSETS[..i].iter().all(|b| b.name != a.name),
                "{} twice",
                a.name
            );
            let ext = a.name.rsplit('.').next().unwrap_or_default();
            let expected = match ext {
                "html" => "text/html",
                "js" => "text/javascript",
                "css" => "text/css",
                "svg" => "image/svg+xml",
                _ => "text/plain",
            };
            assert!(a.content_type.starts_with(expected), "{}", a.name);
        }
        assert_eq!(find("app.js").map(|a| a.name), Some("app.js"));
        assert_eq!(find("../Cargo.toml"), None);
    }

    #[test]
    fn the_page_loads_nothing_from_another_origin() {
        for a in ASSETS.iter().filter(|a| a.name != "uPlot.LICENSE") {
            let text = String::from_utf8_lossy(a.body);
            for needle in ["http://", "https://", "//cdn", "fonts.googleapis"] {
                // uPlot names the SVG namespace and its own repository in comments and strings.
                let allowed = ["http://www.w3.org/2000/svg", "https://github.com/leeoniya"];
                let hits = text
                    .match_indices(needle)
                    .filter(|(at, _)| !allowed.iter().any(|ok| text[*at..].starts_with(ok)));
                assert_eq!(hits.count(), 0, "{needle} in {}", a.name);
            }
        }
        let page = String::from_utf8_lossy(INDEX.body);
        assert!(!page.contains("<script>"), "inline script in index.html");
        assert!(!page.contains("style="), "inline style in index.html");
    }
}
