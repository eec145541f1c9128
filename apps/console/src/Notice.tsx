/** What an action did, or why it failed: announced to screen readers (status or alert), shown in one style. */
export type Note = { error: boolean; text: string } | null;

export function Notice({ note }: { note: Note }) {
  if (!note) return null;
  return (
    <p className={note.error ? 'error' : 'notice'} role={note.error ? 'alert' : 'status'}>
      {note.text}
    </p>
  );
}

/** A failure alone (null shows nothing). */
export const ErrorNotice = ({ text }: { text: string | null }) => <Notice note={text ? { error: true, text } : null} />;
