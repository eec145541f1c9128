import { visibleLine } from '@app/contracts/visible-text';

/**
 * Puts a value on the clipboard, for the operator to paste (into a terminal, often): through the rule every text
 * output of Plant Store follows (@app/contracts/visible-text), so a control character in it would be pasted as an
 * escape, never obeyed. What the buttons copy today (a signing secret, a portal link) is Plant Store's own, with none
 * in it: this keeps it so for whatever a button copies next.
 */
export const copyText = (text: string): Promise<void> => navigator.clipboard.writeText(visibleLine(text));
