// The sandbox proxy of MCP Apps (SEP-1865's double iframe): the outer frame, served from
// an origin of its own (the remote plugin's second listener), between the management page
// and an app's HTML. The page sends the app's HTML once (ui/notifications/sandbox-resource-ready);
// the proxy loads it into an inner frame sandboxed without allow-same-origin, so every app
// runs in an opaque origin of its own — no access to this frame, to other apps or to the
// page — under the Content-Security-Policy this document was served with (the resource's
// ui.csp, built by the host; the inner document inherits it). Every other message is
// relayed unchanged: the page's to the app, the app's to the page (only to the page's
// origin, which the server wrote into this document; the page is the only origin allowed
// to frame it). The proxy itself sends nothing but its ready notification.
"use strict";

(() => {
  const host = document.documentElement.dataset.host;
  const READY = "ui/notifications/sandbox-proxy-ready";
  const RESOURCE = "ui/notifications/sandbox-resource-ready";
  if (window.parent === window || !host) return;

  let inner = null;

  // allowOf maps the permissions the host granted to the inner frame's allow attribute.
  function allowOf(p) {
    const out = [];
    if (p && p.camera) out.push("camera");
    if (p && p.microphone) out.push("microphone");
    if (p && p.geolocation) out.push("geolocation");
    if (p && p.clipboardWrite) out.push("clipboard-write");
    return out.join("; ");
  }

  function load(params) {
    if (inner || typeof params.html !== "string") return; // one app per proxy
    inner = document.createElement("iframe");
    inner.setAttribute("sandbox", "allow-scripts allow-forms");
    inner.setAttribute("title", "MCP app");
    const allow = allowOf(params.permissions);
    if (allow) inner.setAttribute("allow", allow);
    inner.srcdoc = params.html;
    document.body.append(inner);
  }

  window.addEventListener("message", (e) => {
    const data = e.data;
    if (!data || typeof data !== "object" || data.jsonrpc !== "2.0") return;
    const sandboxOwn = typeof data.method === "string" && data.method.startsWith("ui/notifications/sandbox-");
    if (e.source === window.parent && e.origin === host) {
      if (data.method === RESOURCE) load(data.params || {});
      else if (!sandboxOwn && inner) inner.contentWindow.postMessage(data, "*");
    } else if (inner && e.source === inner.contentWindow && !sandboxOwn) {
      window.parent.postMessage(data, host);
    }
  });

  window.parent.postMessage({ jsonrpc: "2.0", method: READY, params: {} }, host);
})();
