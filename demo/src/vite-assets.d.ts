/** Vite's `?url` imports (the demo bundles wllama's wasm and imports its URL). */
declare module "*.wasm?url" {
  const url: string;
  export default url;
}
