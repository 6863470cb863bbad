/**
 * Where the records of the feeds' CSV end, found in its bytes as they stream: a record ends at a `\n`
 * outside quotes. Inside a quoted cell a quote is written doubled, which closes and reopens the
 * quotes, so counting quotes is enough; a `\n` or `\r` in a cell is always quoted (csv.ts). The
 * search is by `indexOf`, a few native calls a record, never a JavaScript loop over bytes.
 */
const QUOTE = 0x22;
const NEWLINE = 0x0a;

export class RecordEnds {
  private quoted = false;

  /** The offsets just after each record end in `chunk`, the next chunk of the stream, in order. */
  in(chunk: Buffer): number[] {
    const ends: number[] = [];
    let at = 0;
    let quote = chunk.indexOf(QUOTE, at);
    let newline = chunk.indexOf(NEWLINE, at);
    while (at < chunk.length) {
      if (this.quoted) {
        if (quote < 0) break;
        this.quoted = false;
        at = quote + 1;
        quote = chunk.indexOf(QUOTE, at);
        if (newline >= 0 && newline < at) newline = chunk.indexOf(NEWLINE, at);
      } else if (newline >= 0 && (quote < 0 || newline < quote)) {
        at = newline + 1;
        ends.push(at);
        newline = chunk.indexOf(NEWLINE, at);
      } else if (quote >= 0) {
        this.quoted = true;
        at = quote + 1;
        quote = chunk.indexOf(QUOTE, at);
      } else {
        break;
      }
    }
    return ends;
  }
}
