// The popup asks the service worker; the test reads globalThis.__result.
const params = new URLSearchParams(location.search);
chrome.runtime.sendMessage({ target: "background", mode: params.get("mode") ?? "offscreen", worker: params.get("worker") ?? "hosted" }).then(
  (reply) => (globalThis.__result = reply ?? { error: "no reply" }),
  (error) => (globalThis.__result = { error: `${error?.name}: ${error?.message}` }),
);
