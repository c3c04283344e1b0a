/**
 * TEST-ONLY compatibility shim for running an older prebuilt model library on
 * web-llm 0.2.86 in the real-engine smoke run. Never imported by src/.
 *
 * 1. Two wasm imports. Model libraries built in 2025 (binary-mlc-llm-libs
 *    `v0_2_80`, e.g. snowflake-arctic-embed-s) import two TVM thread-pool hooks
 *    from `env` that the tvmjs runtime shipped in web-llm 0.2.86 no longer
 *    provides: `tvm::runtime::threading::ResetThreadPool()` and
 *    `tvm::runtime::threading::NumThreads()`. WebAssembly here is
 *    single-threaded, so a no-op and `1` are their correct bodies. Any other
 *    missing function import gets a stub that throws with its name, so an ABI
 *    gap is reported, never hidden.
 * 2. Optional kernel stubs. SwiftShader spends ~800 s of single-threaded
 *    compilation on `argsort1_kernel_2` (the GPU sort used only for top-p
 *    sampling) that these libraries carry; web-llm compiles every kernel at
 *    load. An embedding model never samples, so replacing that kernel's body by
 *    `{}` cuts the load to seconds without touching any kernel the embedding
 *    path runs. Never stub a kernel the measured path executes.
 *
 * Adapted from the shared real-model tool's compat_shim.js.
 */
const KNOWN: Record<string, (...args: unknown[]) => unknown> = {
  _ZN3tvm7runtime9threading15ResetThreadPoolEv: () => undefined,
  _ZN3tvm7runtime9threading10NumThreadsEv: () => 1,
};

export interface CompatShimOptions {
  /** WGSL kernel names whose body is emptied before pipeline creation. */
  stubKernels?: string[];
}

/** What the shim did, for the smoke report (also on the console: the driver keeps worker console lines). */
export const shimLog: string[] = [];
const note = (line: string) => {
  if (!shimLog.includes(line)) console.info(`[compat-shim] ${line}`);
  shimLog.push(line);
};
let installed = false;

export function installCompatShim(options: CompatShimOptions = {}): void {
  if (installed) return;
  installed = true;
  const original = WebAssembly.instantiate.bind(WebAssembly) as (source: unknown, imports?: WebAssembly.Imports) => Promise<unknown>;
  (WebAssembly as { instantiate: unknown }).instantiate = async (source: unknown, imports?: WebAssembly.Imports) => {
    if (source instanceof WebAssembly.Module || !imports || !imports.env) return original(source, imports);
    const module = await WebAssembly.compile(source as BufferSource);
    for (const imp of WebAssembly.Module.imports(module)) {
      if (imp.kind !== "function") continue;
      const ns = (imports[imp.module] ??= {}) as Record<string, unknown>;
      if (typeof ns[imp.name] === "function") continue;
      if (imp.module === "env" && KNOWN[imp.name]) {
        ns[imp.name] = KNOWN[imp.name];
        note(`supplied ${imp.name}`);
      } else {
        ns[imp.name] = () => {
          throw new Error(`missing wasm import ${imp.module}.${imp.name}`);
        };
        note(`stubbed import ${imp.module}.${imp.name}`);
      }
    }
    const instance = await original(module, imports);
    return { module, instance };
  };

  const stubs = options.stubKernels ?? [];
  const Device = (globalThis as { GPUDevice?: { prototype: GPUDevice } }).GPUDevice;
  if (!stubs.length || !Device) return;
  const createShaderModule = Device.prototype.createShaderModule;
  Device.prototype.createShaderModule = function (this: GPUDevice, descriptor: GPUShaderModuleDescriptor) {
    for (const name of stubs) {
      const code = descriptor.code;
      const at = code.indexOf(`fn ${name}(`);
      if (at < 0) continue;
      let i = code.indexOf("(", at);
      for (let depth = 0; i < code.length; i++) {
        if (code[i] === "(") depth++;
        else if (code[i] === ")" && --depth === 0) break;
      }
      descriptor = { ...descriptor, code: `${code.slice(0, code.indexOf("{", i))}{\n}\n` };
      note(`stubbed kernel ${name}`);
    }
    return createShaderModule.call(this, descriptor);
  };
}

/** The options a page passes to a worker in its name (`… stubKernels=a,b`). */
export function shimOptionsFromName(name: string): CompatShimOptions {
  return { stubKernels: (/stubKernels=(\S*)/.exec(name)?.[1] ?? "").split(",").filter(Boolean) };
}
