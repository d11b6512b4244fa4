/** The part of a terminal's output kept in memory, as ACP's `terminal/output` returns it. */
export interface OutputSnapshot {
  readonly output: string;
  readonly truncated: boolean;
}

/**
 * Keeps the last `limit` bytes written. When older bytes are dropped the
 * retained text starts at the next UTF-8 character boundary, so a multi-byte
 * character is never split; the text is at most `limit` bytes.
 */
export class TerminalOutput {
  /** Retained bytes are `buffer[start, end)`; the buffer grows up to twice the limit so compaction is rare. */
  private buffer = Buffer.alloc(0);
  private start = 0;
  private end = 0;
  private truncated = false;

  constructor(private readonly limit: number) {
    assertByteLimit(limit);
  }

  append(chunk: Uint8Array): void {
    const total = this.end - this.start + chunk.length;
    if (total > this.limit) this.truncated = true;
    if (chunk.length >= this.limit) {
      this.replaceWith(chunk.subarray(chunk.length - this.limit));
      return;
    }
    this.start += total - Math.min(total, this.limit);
    if (this.end + chunk.length > this.buffer.length) this.compact(Math.min(total, this.limit));
    this.buffer.set(chunk, this.end);
    this.end += chunk.length;
  }

  /**
   * The retained text. While more output may follow (`ended` false), a
   * character whose last bytes have not arrived yet is held back rather than
   * shown as a replacement character.
   */
  snapshot(ended: boolean): OutputSnapshot {
    const bytes = this.buffer.subarray(this.start, this.end);
    const from = this.truncated ? leadingContinuationBytes(bytes) : 0;
    const to = ended ? bytes.length : bytes.length - incompleteTailBytes(bytes);
    return { output: bytes.toString("utf8", from, Math.max(from, to)), truncated: this.truncated };
  }

  /** The retained bytes as they came, from the first whole character on (a terminal decodes a character split at the end with what follows). */
  bytes(): Buffer {
    const bytes = this.buffer.subarray(this.start, this.end);
    return Buffer.from(bytes.subarray(this.truncated ? leadingContinuationBytes(bytes) : 0));
  }

  /** The end of the output, for an error message or a log line: at most `maxChars`, marked `…` if cut. */
  quotedTail(maxChars = 2_000): string {
    const text = this.snapshot(true).output.trim();
    return text.length > maxChars ? `…${text.slice(-maxChars)}` : text;
  }

  private replaceWith(bytes: Uint8Array): void {
    if (this.buffer.length < bytes.length) this.buffer = Buffer.allocUnsafe(bytes.length);
    this.buffer.set(bytes, 0);
    this.start = 0;
    this.end = bytes.length;
  }

  /** Moves the retained bytes to the front, growing the buffer so `needed` bytes fit. */
  private compact(needed: number): void {
    const capacity = Math.max(this.buffer.length, Math.min(2 * this.limit, Math.max(4096, 2 * needed)));
    const target = capacity === this.buffer.length ? this.buffer : Buffer.allocUnsafe(capacity);
    this.buffer.copy(target, 0, this.start, this.end);
    this.end -= this.start;
    this.start = 0;
    this.buffer = target;
  }
}

export function assertByteLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new Error(`outputByteLimit must be a non-negative integer, got ${JSON.stringify(limit)}`);
  }
}

function isContinuationByte(byte: number): boolean {
  return (byte & 0b1100_0000) === 0b1000_0000;
}

/** Continuation bytes at the start: the tail of a character whose lead byte was dropped. */
function leadingContinuationBytes(bytes: Buffer): number {
  let count = 0;
  while (count < 3 && count < bytes.length && isContinuationByte(bytes[count]!)) count++;
  return count;
}

/** Bytes at the end that begin a multi-byte character but do not finish it yet. */
function incompleteTailBytes(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if (isContinuationByte(byte)) continue;
    return back < sequenceLength(byte) ? back : 0;
  }
  return 0;
}

/** How many bytes the character starting with this lead byte has (1 for ASCII and for invalid bytes). */
function sequenceLength(lead: number): number {
  if ((lead & 0b1110_0000) === 0b1100_0000) return 2;
  if ((lead & 0b1111_0000) === 0b1110_0000) return 3;
  if ((lead & 0b1111_1000) === 0b1111_0000) return 4;
  return 1;
}
