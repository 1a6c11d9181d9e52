// How the foundation benchmark measures the list page without its cache, from outside and with
// the product unchanged: the cache keys an answer by its raw URL and keeps the 1,000 most
// recently used (src/deps.ts, src/api/jsonapi/respond.ts). `?page[limit]=50` asks for the
// default page, and each of its 11 letters and digits may be sent as itself or
// percent-encoded (`%70age`, `%35%30`): 2,048 URLs that all parse to the same query and answer
// the same 50 workflows. Sent in turn, each comes back only after 2,047 others were stored, long
// after the cache evicted it, so every request misses: the query, reading the rows and
// serialising run every time (plus storing the answer in the cache, as a real miss does).
const PATH = '/api/v1/workflows';
/** The list cache's capacity (src/deps.ts: `new FreshCache<Buffer>(1000)`), which the spellings must exceed. */
const LIST_CACHE_CAPACITY = 1000;

const encoded = (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`;

/** The 2,048 spellings of `/api/v1/workflows?page[limit]=50`, brackets always encoded (%5B, %5D). */
export function uncachedListPaths() {
  const chars = [...'pagelimit50'];
  const paths = [];
  for (let mask = 0; mask < 2 ** chars.length; mask += 1) {
    const spelt = chars.map((char, i) => (mask & (1 << i) ? encoded(char) : char));
    paths.push(`${PATH}?${spelt.slice(0, 4).join('')}%5B${spelt.slice(4, 9).join('')}%5D=${spelt.slice(9).join('')}`);
  }
  if (paths.length <= LIST_CACHE_CAPACITY) throw new Error('fewer spellings than the list cache holds: some requests would hit');
  return paths;
}
