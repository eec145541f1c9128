/** Opaque page cursors: the last row's sequence number, base64url-encoded. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`s:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^s:(\d{1,16})$/.exec(text);
  return m ? Number(m[1]) : null;
}
