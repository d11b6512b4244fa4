/**
 * Server-Sent Events frames out of a stream's chunks, in time linear in what arrives: each search for a frame's end starts
 * in the new chunk (one character back, for an end split between two chunks), and an unfinished frame is kept as its pieces,
 * joined once it ends. A frame larger than `maxBytes` (a peer gone wrong) throws rather than fill memory.
 */
export class SseFrames {
  private pieces: string[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The frames `chunk` (`byteLength` bytes on the wire) ended, without their blank line. */
  push(chunk: string, byteLength: number): string[] {
    const frames: string[] = [];
    let start = 0;
    const last = this.pieces.at(-1);
    if (last?.endsWith("\n") && chunk.startsWith("\n")) {
      this.pieces[this.pieces.length - 1] = last.slice(0, -1);
      frames.push(this.take());
      start = 1;
    }
    for (let end = chunk.indexOf("\n\n", start); end !== -1; end = chunk.indexOf("\n\n", start)) {
      this.pieces.push(chunk.slice(start, end));
      frames.push(this.take());
      start = end + 2;
    }
    const rest = start === 0 ? chunk : chunk.slice(start);
    if (rest !== "") this.pieces.push(rest);
    // What is left is the new chunk's tail if a frame ended in it, else all of it joins the unfinished frame.
    this.bytes = frames.length > 0 ? Buffer.byteLength(rest) : this.bytes + byteLength;
    if (this.bytes > this.maxBytes) throw new Error(`a frame of more than ${this.maxBytes} bytes`);
    return frames;
  }

  private take(): string {
    const frame = this.pieces.join("");
    this.pieces = [];
    return frame;
  }
}
