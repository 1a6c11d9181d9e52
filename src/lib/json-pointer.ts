/** RFC 6901: `~` and `/` inside a reference token are written `~0` and `~1`. */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}
