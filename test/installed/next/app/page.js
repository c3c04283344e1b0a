// A server component that imports the library (rendered on the server at build or request time),
// and the client component that runs it in the browser.
import { ApiError, createClient } from "webgpu-openai";
import Chat from "./chat.js";

export default function Page() {
  const server = `${typeof createClient} ${typeof ApiError}`;
  return (
    <main>
      <p id="server">imported on the server: {server}</p>
      <Chat server={server} />
    </main>
  );
}
