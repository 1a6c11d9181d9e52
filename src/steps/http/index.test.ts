import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { httpStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(httpStep, mergeStepConfig(httpStep, config));

describe('http step', () => {
  it('accepts its default config once a url is given', () => {
    expect(check({ url: 'https://api.example.com/orders' })).toEqual([]);
  });

  it('requires a non-empty url, which the default config leaves out', () => {
    expect(check({})).toEqual([{ pointer: '/url', detail: 'config.url is required.' }]);
    expect(check({ url: '' })).toEqual([{ pointer: '/url', detail: 'config.url must not be empty.' }]);
  });

  it('accepts expressions in the url, headers, query and body', () => {
    expect(
      check({
        method: 'POST',
        url: 'https://api.example.com/orders/{{ trigger.body.id }}',
        headers: { Authorization: 'Bearer {{ trigger.headers.token }}' },
        query: { page: '{{ index }}' },
        body: '{{ nodes.shape }}',
      }),
    ).toEqual([]);
  });

  it('rejects an unknown method, non-string header values and a too long timeout', () => {
    expect(check({ url: 'https://x.test', method: 'FETCH', headers: { 'X-Count': 3 }, timeout_ms: 300001 })).toEqual([
      { pointer: '/method', detail: 'config.method must be one of "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS".' },
      { pointer: '/headers/X-Count', detail: 'config.headers.X-Count must be a string.' },
      { pointer: '/timeout_ms', detail: 'config.timeout_ms must be at most 300000.' },
    ]);
  });

  it('rejects fields it does not know', () => {
    expect(check({ url: 'https://x.test', follow_redirects: true })).toEqual([
      { pointer: '/follow_redirects', detail: 'config.follow_redirects is not a known field.' },
    ]);
  });
});
