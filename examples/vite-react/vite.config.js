import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  // Without this Vite builds the engine worker as one classic script with web-llm (6 MB) inlined.
  worker: { format: "es" },
});
