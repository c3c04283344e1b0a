/**
 * The microphone: MediaRecorder in the page (it has no worker form), Opus in
 * WebM (Chrome, Firefox) or Ogg, which the library decodes to PCM in its
 * worker. `toAudioPart` makes the chat's `input_audio` part from a recording.
 */
export interface Recording {
  blob: Blob;
  /** The container, as `input_audio.format` names it. */
  format: "webm" | "ogg" | "wav" | "mp3";
  seconds: number;
}

/** What MediaRecorder writes, best first; the library decodes each of these. */
const TYPES = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/webm", "audio/ogg"];

export function formatOfType(type: string): Recording["format"] | null {
  const subtype = type.toLowerCase().replace(/^audio\//, "").replace(/;.*$/, "");
  if (subtype === "webm" || subtype === "ogg") return subtype;
  if (subtype === "wav" || subtype === "wave" || subtype === "x-wav") return "wav";
  if (subtype === "mpeg" || subtype === "mp3") return "mp3";
  return null;
}

export class MicRecorder {
  private recorder: MediaRecorder | null = null;
  private stream: MediaStream | null = null;
  private chunks: Blob[] = [];
  private started = 0;
  private timer = 0;

  get recording(): boolean {
    return this.recorder !== null;
  }

  /** Asks for the microphone and starts recording; `onTick` gets the seconds recorded, about 4 times a second. */
  async start(onTick: (seconds: number) => void): Promise<void> {
    if (typeof MediaRecorder === "undefined" || !navigator.mediaDevices?.getUserMedia) throw new Error("This browser cannot record audio (no MediaRecorder or getUserMedia).");
    const mimeType = TYPES.find((t) => MediaRecorder.isTypeSupported(t));
    if (!mimeType) throw new Error("This browser records no format the library decodes (WebM or Ogg with Opus).");
    this.stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
    this.chunks = [];
    this.recorder = new MediaRecorder(this.stream, { mimeType });
    this.recorder.ondataavailable = (event) => {
      if (event.data.size > 0) this.chunks.push(event.data);
    };
    this.recorder.start(250);
    this.started = performance.now();
    this.timer = window.setInterval(() => onTick((performance.now() - this.started) / 1000), 250);
  }

  /** Stops and hands back what was recorded. */
  stop(): Promise<Recording> {
    const recorder = this.recorder;
    if (!recorder) return Promise.reject(new Error("Not recording."));
    return new Promise((resolve, reject) => {
      recorder.onstop = () => {
        const type = recorder.mimeType || this.chunks[0]?.type || "audio/webm";
        const blob = new Blob(this.chunks, { type });
        const seconds = (performance.now() - this.started) / 1000;
        this.release();
        const format = formatOfType(type);
        if (!format) reject(new Error(`The recording is ${type}, which the library does not decode.`));
        else resolve({ blob, format, seconds });
      };
      recorder.stop();
    });
  }

  /** Stops without keeping anything. */
  cancel(): void {
    if (this.recorder && this.recorder.state !== "inactive") {
      this.recorder.onstop = null;
      this.recorder.stop();
    }
    this.release();
  }

  private release() {
    window.clearInterval(this.timer);
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.stream = null;
    this.recorder = null;
  }
}

/** The chat's `input_audio` part: base64, as OpenAI's JSON carries it (the drop-in view replays it through the SDK). */
export async function toAudioPart(recording: Pick<Recording, "blob" | "format">): Promise<{ type: "input_audio"; input_audio: { data: string; format: Recording["format"] } }> {
  const url = await new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(recording.blob);
  });
  return { type: "input_audio", input_audio: { data: url.slice(url.indexOf(",") + 1), format: recording.format } };
}

export const clock = (seconds: number) => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, "0")}`;
