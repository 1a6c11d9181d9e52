// The labelled question set of the retrieval-quality benchmark: questions a user of Switchyard
// would ask, about the project's own documentation (README.md, docs/*.md, the engine's
// ARCHITECTURE.md), each with the passage that answers it. A search result is relevant when it
// comes from the named file and its text contains the passage (`answer`), so the labels do not
// depend on where the chunker cuts. Questions are worded as users ask, not copied from the text.
export const CORPUS = [
  'README.md',
  'docs/api.md',
  'docs/architecture.md',
  'docs/errors.md',
  'docs/webhooks.md',
  'src/engine/ARCHITECTURE.md',
];

export const QUESTIONS = [
  { question: 'How many API requests per minute does one token get by default?', file: 'README.md', answer: 'SWITCHYARD_API_RATE_LIMIT' },
  { question: 'Where does the generated encryption key live when none is configured?', file: 'README.md', answer: 'secret.key' },
  { question: 'How do I run the test suite against PostgreSQL as well?', file: 'README.md', answer: 'SWITCHYARD_TEST_DATABASE_URL' },
  {
    question: 'How long are finished executions kept before they are deleted?',
    file: 'README.md',
    answer: 'SWITCHYARD_EXECUTION_RETENTION_DAYS',
  },
  { question: 'Which command mints a new API token for a workspace?', file: 'README.md', answer: 'token create --workspace' },
  { question: 'What status do I get when I send a body that is not JSON:API?', file: 'docs/api.md', answer: 'another type is 415' },
  { question: 'What happens if my Accept header does not allow the JSON:API media type?', file: 'docs/api.md', answer: 'is 406' },
  { question: 'What is the maximum size of a request body?', file: 'docs/api.md', answer: 'Request bodies are limited to 1 MiB' },
  { question: 'How many nodes and edges can one workflow graph have?', file: 'docs/api.md', answer: 'at most 2,000 nodes and 5,000 edges' },
  { question: 'Can I limit how many runs of one workflow execute at the same time?', file: 'docs/api.md', answer: 'concurrency_limit' },
  { question: 'What is the default page size of list endpoints and its maximum?', file: 'docs/api.md', answer: '(default 50, 1 to 500)' },
  { question: 'What does duplicating a workflow copy?', file: 'docs/api.md', answer: 'copies name' },
  {
    question: 'What happens to /run when too many executions are waiting in the queue?',
    file: 'docs/api.md',
    answer: '256 executions are already queued',
  },
  { question: 'How do I re-run a failed execution from the step that failed?', file: 'docs/api.md', answer: 'POST /executions/:id/retry' },
  { question: 'How deeply can workflows call other workflows?', file: 'docs/api.md', answer: 'nest at most 16 deep' },
  { question: 'What do API tokens look like and how are they stored?', file: 'docs/api.md', answer: '40 base62 characters' },
  { question: 'How often is the last used time of a token updated?', file: 'docs/api.md', answer: 'at most once a minute' },
  { question: 'Is case-insensitive filtering Unicode aware?', file: 'docs/api.md', answer: 'Unicode simple case mapping' },
  { question: 'How are positions computed when I reorder folders or workflows?', file: 'docs/api.md', answer: 'Sparse positions' },
  { question: 'How are booleans stored in SQLite compared with PostgreSQL?', file: 'docs/architecture.md', answer: '0/1 on SQLite' },
  { question: 'Why are identifiers time-ordered UUIDs?', file: 'docs/architecture.md', answer: 'UUID v7' },
  {
    question: 'Why are timestamps stored as text rather than timestamptz?',
    file: 'docs/architecture.md',
    answer: 'Timestamps are canonical text',
  },
  {
    question: 'Why does the engine bypass the query builder for its hot writes on SQLite?',
    file: 'docs/architecture.md',
    answer: '~40 µs',
  },
  {
    question: 'Are list responses cached when running on PostgreSQL?',
    file: 'docs/architecture.md',
    answer: 'the database announces writes itself',
  },
  {
    question: 'What does the server log for each request at the info level?',
    file: 'docs/architecture.md',
    answer: 'One access line per request',
  },
  { question: 'Why is the OpenAPI document version 3.1 instead of 3.0?', file: 'docs/architecture.md', answer: 'OpenAPI 3.1' },
  { question: 'Which error code does a write with a read-only token return?', file: 'docs/errors.md', answer: '| `forbidden` | 403 |' },
  {
    question: 'What error does a synchronous webhook return when it times out?',
    file: 'docs/errors.md',
    answer: '`webhook_timeout` | 504',
  },
  { question: 'Which failed HTTP step responses are retried?', file: 'docs/errors.md', answer: '5xx and 429: yes' },
  {
    question: 'What is the limit on the number of items a loop can iterate over?',
    file: 'docs/errors.md',
    answer: 'more than 10,000 elements',
  },
  { question: 'What error does a code step report when it runs out of memory?', file: 'docs/errors.md', answer: '`memory_limit`' },
  {
    question: 'What is a frame in the execution engine?',
    file: 'src/engine/ARCHITECTURE.md',
    answer: '**frame**: what one dataflow runs over',
  },
  {
    question: 'Which step output becomes the output of the whole execution?',
    file: 'src/engine/ARCHITECTURE.md',
    answer: '**Output of the execution**',
  },
  {
    question: 'How does the engine retry a failing node and honour Retry-After delays?',
    file: 'src/engine/ARCHITECTURE.md',
    answer: '**Retries.**',
  },
  {
    question: 'What happens to a running step when its execution is cancelled?',
    file: 'src/engine/ARCHITECTURE.md',
    answer: '**Cancellation** re-reads the execution',
  },
  {
    question: 'After a restart, how does a loop avoid running finished iterations again?',
    file: 'src/engine/ARCHITECTURE.md',
    answer: 'After a restart `restoreFrame` sets body rows aside',
  },
];
