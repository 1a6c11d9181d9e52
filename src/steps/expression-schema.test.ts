import { describe, expect, it } from 'vitest';
import { isWholeExpression } from './expression-schema.js';

describe('isWholeExpression', () => {
  it('accepts one expression, with surrounding whitespace', () => {
    expect(isWholeExpression('{{ trigger.body.status }}')).toBe(true);
    expect(isWholeExpression('  {{$count(nodes.fetch.body)}}\n')).toBe(true);
  });

  it('accepts an expression whose JSONata contains closing braces', () => {
    expect(isWholeExpression('{{ {"a": {"b": trigger.body.x}} }}')).toBe(true);
  });

  it('rejects text around an expression, two expressions, a blank one and non-strings', () => {
    expect(isWholeExpression('status {{ trigger.body.status }}')).toBe(false);
    expect(isWholeExpression('{{ a }} and {{ b }}')).toBe(false);
    expect(isWholeExpression('{{   }}')).toBe(false);
    expect(isWholeExpression('{ a }')).toBe(false);
    expect(isWholeExpression(200)).toBe(false);
  });
});
