import { useEffect, useRef, useState } from "react";
import { client, onProgress } from "./client.js";
import { sendTurn } from "./chat.js";

export function App() {
  const [history, setHistory] = useState([]);
  const [draft, setDraft] = useState("What's the weather in Paris?");
  const [streaming, setStreaming] = useState("");
  const [toolCalls, setToolCalls] = useState([]);
  const [progress, setProgress] = useState(null);
  const [error, setError] = useState("");
  const [gpu, setGpu] = useState(null);
  const [busy, setBusy] = useState(false);
  const controller = useRef(null);

  useEffect(() => onProgress(setProgress), []);
  useEffect(() => void client.gpu.info().then(setGpu), []);

  async function send(event) {
    event.preventDefault();
    const turn = [...history, { role: "user", content: draft }];
    setHistory(turn);
    setDraft("");
    setError("");
    setToolCalls([]);
    controller.current = new AbortController();
    setBusy(true);
    try {
      const next = await sendTurn(turn, setStreaming, (call, result) => setToolCalls((calls) => [...calls, { call, result }]), controller.current.signal);
      setHistory(next);
    } catch (caught) {
      // Stopping is not an error; anything else says what happened (an ApiError's message says what to fix).
      if (caught?.name !== "AbortError") setError(caught?.message ?? String(caught));
    } finally {
      setStreaming("");
      controller.current = null;
      setBusy(false);
    }
  }

  return (
    <main style={{ maxWidth: 640, margin: "2rem auto", fontFamily: "system-ui" }}>
      <h1>Local chat</h1>
      {gpu && !gpu.available && <p role="alert">This browser cannot run the model: {gpu.reason}</p>}
      {progress && progress.fraction < 1 && (
        <p>
          Loading the model ({progress.phase}) <progress value={progress.fraction} max={1} /> {Math.round(progress.fraction * 100)}%
        </p>
      )}
      <ul aria-label="conversation">
        {history
          .filter((m) => (m.role === "user" || m.role === "assistant") && m.content)
          .map((m, i) => (
            <li key={i} data-role={m.role}>
              <b>{m.role}:</b> {m.content}
            </li>
          ))}
        {streaming && <li data-role="streaming">{streaming}</li>}
      </ul>
      {toolCalls.map(({ call, result }) => (
        <p key={call.id} data-testid="tool-call">
          🔧 {call.function.name}({call.function.arguments}) → {JSON.stringify(result)}
        </p>
      ))}
      {error && <p role="alert">{error}</p>}
      <form onSubmit={send}>
        <input value={draft} onChange={(e) => setDraft(e.target.value)} aria-label="message" style={{ width: "70%" }} />
        <button type="submit" disabled={busy || !draft}>Send</button>
        <button type="button" disabled={!busy} onClick={() => controller.current?.abort()}>Stop</button>
      </form>
    </main>
  );
}
