/**
 * Light and dark mode: follows the system (`prefers-color-scheme`) until the
 * reader picks one; the choice is kept in localStorage.
 */
import { h } from "./dom.js";

type Theme = "system" | "light" | "dark";
const KEY = "webgpu-openai-demo-theme";

export function installThemeToggle(): HTMLElement {
  const select = h(
    "select",
    { id: "theme", "aria-label": "Colour theme" },
    h("option", { value: "system" }, "System theme"),
    h("option", { value: "light" }, "Light"),
    h("option", { value: "dark" }, "Dark"),
  );
  const apply = (theme: Theme) => {
    if (theme === "system") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
  };
  const saved = (localStorage.getItem(KEY) as Theme | null) ?? "system";
  select.value = saved;
  apply(saved);
  select.addEventListener("change", () => {
    localStorage.setItem(KEY, select.value);
    apply(select.value as Theme);
  });
  return select;
}
