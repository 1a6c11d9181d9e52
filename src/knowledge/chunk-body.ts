/**
 * What keyword search indexes and embedders see of a chunk: its heading path, then its text.
 * Headings carry much of a chunk's meaning ("Configuration > Rate limits"), and a chunk in the
 * middle of a section rarely repeats them.
 */
export function chunkBody(headingPath: string[], text: string): string {
  return headingPath.length > 0 ? `${headingPath.join(' > ')}\n${text}` : text;
}
