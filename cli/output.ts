// Everything the CLI writes to the terminal goes through here. Much of it is text others wrote (a description set
// through a portal link, a receiver's reply, a plant's name, a dead letter's value, an API's refusal quoting them):
// a control character in it would be obeyed by the terminal, so each write shows them as escapes instead
// (@app/contracts/visible-text, the one rule for every text output).
import { visibleJson, visibleText } from '@app/contracts/visible-text';

/** Human text to stdout: control characters shown as `\x1b`, line feeds and tabs kept. */
export const writeOut = (text: string) => void process.stdout.write(visibleText(text));

/** To stderr, the same way. */
export const writeErr = (text: string) => void process.stderr.write(visibleText(text));

/** JSON for scripts: the same value to a parser (control characters as JSON escapes), nothing a terminal obeys. */
export const asJson = (data: unknown) => visibleJson(JSON.stringify(data, null, 2));
