/** A global teardown that never ends and keeps the process alive (a server waiting on a connection that stays open). */
export default function setup(): () => Promise<void> {
  return () => new Promise<void>(() => void setInterval(() => undefined, 1000));
}
