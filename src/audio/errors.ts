/** Audio that cannot be read: the host turns it into a 400 naming the part. */
export class AudioInputError extends Error {
  constructor(
    message: string,
    readonly code = "invalid_audio",
  ) {
    super(message);
    this.name = "AudioInputError";
  }
}
