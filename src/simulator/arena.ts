const CHUNK_BYTES = 1 << 20;

/**
 * UTF-8 copies of many small strings, packed into 1 MiB chunks. One Buffer per item would cost an
 * allocation each and keep the garbage collector busy; a view into a shared chunk costs neither.
 * Memory of a replaced view is reclaimed with its whole chunk, which is fine for rare mutations.
 */
export class Utf8Arena {
  private chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  private used = 0;

  store(text: string): Buffer {
    const worstCase = text.length * 3;
    if (worstCase > CHUNK_BYTES / 4) return Buffer.from(text);
    if (this.used + worstCase > CHUNK_BYTES) {
      this.chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
      this.used = 0;
    }
    const written = this.chunk.write(text, this.used);
    const view = this.chunk.subarray(this.used, this.used + written);
    this.used += written;
    return view;
  }
}
