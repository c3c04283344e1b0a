/** Test helpers for apps: a deterministic local "model" with no GPU and no download. */
export { createScriptedEngine, scriptedTokens } from "./engine/scripted.js";
export { hashedBagOfWords } from "./engine/scripted-embed.js";
export type { ScriptedEngine, ScriptedEngineOptions, ScriptedReply } from "./engine/scripted.js";
export { exposeEngineHost } from "./worker/expose.js";
export { exposeSharedEngineHost } from "./worker/shared-host.js";
export { EngineHost } from "./host/engine-host.js";
export type { EngineRequest, EngineAudioPart } from "./engine/types.js";
export { scriptedVoiceModel, SCRIPTED_VOICE_AUDIO } from "./models/scripted-voice.js";
export type { ScriptedVoiceOptions } from "./models/scripted-voice.js";
