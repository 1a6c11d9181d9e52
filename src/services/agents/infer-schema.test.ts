import { describe, expect, it } from 'vitest';
import { checkAgainst } from '../../steps/agent/agent-tools.js';
import { inferSchema } from './infer-schema.js';

describe('a workflow tool schema inferred from a trigger sample', () => {
  it('describes objects (every member required), arrays by their first element, and scalars', () => {
    const schema = inferSchema({
      order: 'A-1',
      quantity: 2,
      price: 9.5,
      gift: false,
      note: null,
      tags: ['x'],
      customer: { email: 'a@b.test' },
    });
    expect(schema).toEqual({
      type: 'object',
      required: ['order', 'quantity', 'price', 'gift', 'note', 'tags', 'customer'],
      properties: {
        order: { type: 'string' },
        quantity: { type: 'integer' },
        price: { type: 'number' },
        gift: { type: 'boolean' },
        note: { type: 'null' },
        tags: { type: 'array', items: { type: 'string' } },
        customer: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
      },
    });
  });

  it('accepts arguments shaped like the sample and names what breaks it', () => {
    const schema = inferSchema({ order: 'A-1', quantity: 2 });
    expect(checkAgainst(schema, { order: 'B-7', quantity: 1 })).toBeNull();
    expect(checkAgainst(schema, { order: 'B-7' })).toBe("(root) must have required property 'quantity'");
    expect(checkAgainst(schema, { order: 7, quantity: 1.5 })).toBe('/order must be string; /quantity must be integer');
  });
});
