/** Vite's `?worker&url` import: the URL of the bundled worker (so the page can add a query to it). */
declare module "*?worker&url" {
  const url: string;
  export default url;
}
