import { AppError } from '../../errors/app-error.js';

/**
 * How deep a JSON request body may nest arrays and objects, the body itself being level 1.
 *
 * JSON.parse is iterative and takes any depth, but much that follows recurses: JSON.stringify
 * (rows, graphs, inputs, metadata and schemas are stored as JSON text), the unstorable-text
 * walk, the schema compiler. In a request, JSON.stringify overflowed the stack (a 500) from
 * about 4,175 levels on each route that stores what it is given (Node 20, default stack), so
 * 100 leaves a 40x margin. The deepest envelope, a node's config in a sub-folder of a folder
 * import (`{data:{document:{folders:[{workflows:[{graph:{nodes:[{config:`), takes 11 levels,
 * so every value keeps at least 89, itself included (a store row or a run's input 98, a
 * document's metadata in the resource form 97; a store schema keeps its own limit of 64,
 * src/store/row-schema.ts). Webhook deliveries keep their own, larger limit (512,
 * src/webhooks/parse-json-body.ts): their shape is the sender's, not the API's.
 */
export const MAX_BODY_DEPTH = 100;

/** The 400 for a body that nests past the limit, pointing at the array or object that does. */
export function tooDeepError(pointer: string): AppError {
  return new AppError(
    'json_too_deep',
    `the body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`,
    { pointer },
    {
      meta: { max_depth: MAX_BODY_DEPTH },
    },
  );
}
