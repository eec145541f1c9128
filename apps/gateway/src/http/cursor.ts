/** Opaque page cursors: the last row's sequence number, base64url-encoded. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`s:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^s:(\d{1,16})$/.exec(text);
  const seq = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(seq) ? seq : null; // 16 digits may go beyond 2^53: never a rounded position
}
