import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      slackApiUrl: 'https://slack.com/api',
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: null,
      baseUrl: 'http://127.0.0.1:8080',
      secretKey: null,
      apiRateLimit: 600,
      webhookRateLimit: 6000,
      trustProxy: [],
      httpAllow: [],
      executionRetentionDays: 14,
      logLevel: 'info',
      logFormat: 'json',
      role: 'all',
      leaseMs: 30_000,
      heartbeatMs: 10_000,
      pollMs: 1_000,
      shutdownGraceMs: 30_000,
      maxRunning: 64,
      workerConcurrency: 64,
      storeMaxRowCap: 10_000_000,
      metricsToken: null,
      emailAttachmentMaxBytes: 262_144,
    });
    expect(config.dataDir.endsWith('/data')).toBe(true);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('derives the base URL from HOST and PORT, and strips a trailing slash from an explicit one', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).baseUrl).toBe('http://0.0.0.0:9000');
    expect(loadConfig({ SWITCHYARD_BASE_URL: 'https://sy.example.com/' }).baseUrl).toBe('https://sy.example.com');
  });

  it.each([
    ['PORT', 'eighty', 'PORT: must be a whole number'],
    ['PORT', '70000', 'PORT: must be between 0 and 65535'],
    ['HOST', 'not a host!', 'HOST:'],
    ['DATABASE_URL', 'mysql://x', 'DATABASE_URL: must be a postgres://'],
    ['SWITCHYARD_BASE_URL', 'ftp://x', 'SWITCHYARD_BASE_URL:'],
    ['SWITCHYARD_SECRET_KEY', 'short', 'SWITCHYARD_SECRET_KEY: must be at least 32'],
    ['SWITCHYARD_API_RATE_LIMIT', '-1', 'SWITCHYARD_API_RATE_LIMIT:'],
    ['SWITCHYARD_WEBHOOK_RATE_LIMIT', 'lots', 'SWITCHYARD_WEBHOOK_RATE_LIMIT:'],
    ['SWITCHYARD_TRUST_PROXY', '10.0.0.0/99', 'SWITCHYARD_TRUST_PROXY:'],
    ['SWITCHYARD_HTTP_ALLOW', 'bad host!', 'SWITCHYARD_HTTP_ALLOW:'],
    ['SWITCHYARD_EXECUTION_RETENTION_DAYS', 'two weeks', 'SWITCHYARD_EXECUTION_RETENTION_DAYS:'],
    ['SWITCHYARD_LOG_LEVEL', 'verbose', 'SWITCHYARD_LOG_LEVEL: "verbose" is not one of fatal, error, warn, info, debug, trace, silent'],
    ['SWITCHYARD_LOG_FORMAT', 'xml', 'SWITCHYARD_LOG_FORMAT: "xml" is not one of json, pretty'],
    ['SWITCHYARD_ROLE', 'boss', 'SWITCHYARD_ROLE: "boss" is not one of all, api, worker'],
    ['SWITCHYARD_LEASE_MS', '10', 'SWITCHYARD_LEASE_MS: must be between 1000 and 3600000'],
    ['SWITCHYARD_HEARTBEAT_MS', '20000', 'SWITCHYARD_HEARTBEAT_MS: must be at most half of SWITCHYARD_LEASE_MS (30000)'],
    ['SWITCHYARD_MAX_RUNNING', '0', 'SWITCHYARD_MAX_RUNNING: must be between 1'],
    ['SWITCHYARD_STORE_MAX_ROW_CAP', '0', 'SWITCHYARD_STORE_MAX_ROW_CAP: must be between 1 and 2000000000'],
    ['SWITCHYARD_STORE_MAX_ROW_CAP', '1e6', 'SWITCHYARD_STORE_MAX_ROW_CAP: must be a whole number'],
    ['SWITCHYARD_METRICS_TOKEN', 'short', 'SWITCHYARD_METRICS_TOKEN: must be at least 16 printable characters'],
    ['SWITCHYARD_METRICS_TOKEN', 'sixteen chars but spaced', 'SWITCHYARD_METRICS_TOKEN: must be at least 16 printable characters'],
  ])('stops on a bad %s naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('takes a metrics token', () => {
    expect(loadConfig({ SWITCHYARD_METRICS_TOKEN: ' scrape-token-0123456789 ' }).metricsToken).toBe('scrape-token-0123456789');
  });

  it('parses lists and zero limits', () => {
    const config = loadConfig({
      SWITCHYARD_TRUST_PROXY: '10.0.0.1, 192.168.0.0/16',
      SWITCHYARD_HTTP_ALLOW: 'localhost,127.0.0.1',
      SWITCHYARD_API_RATE_LIMIT: '0',
    });
    expect(config.trustProxy).toEqual(['10.0.0.1', '192.168.0.0/16']);
    expect(config.httpAllow).toEqual(['localhost', '127.0.0.1']);
    expect(config.apiRateLimit).toBe(0);
    expect(loadConfig({ SWITCHYARD_LOG_FORMAT: 'pretty', SWITCHYARD_LOG_LEVEL: 'debug' })).toMatchObject({
      logFormat: 'pretty',
      logLevel: 'debug',
    });
    expect(loadConfig({ SWITCHYARD_ROLE: 'worker', SWITCHYARD_MAX_RUNNING: '200' })).toMatchObject({
      role: 'worker',
      maxRunning: 200,
      workerConcurrency: 200,
    });
    expect(loadConfig({ SWITCHYARD_MAX_RUNNING: '200', SWITCHYARD_WORKER_CONCURRENCY: '20' })).toMatchObject({
      maxRunning: 200,
      workerConcurrency: 20,
    });
  });

  it('derives the heartbeat from a shortened lease when the heartbeat is not set', () => {
    expect(loadConfig({})).toMatchObject({ leaseMs: 30_000, heartbeatMs: 10_000 });
    expect(loadConfig({ SWITCHYARD_LEASE_MS: '3000' })).toMatchObject({ leaseMs: 3_000, heartbeatMs: 1_000 });
    expect(loadConfig({ SWITCHYARD_LEASE_MS: '1000', SWITCHYARD_HEARTBEAT_MS: '400' })).toMatchObject({ leaseMs: 1_000, heartbeatMs: 400 });
  });

  it('reads the server maximum of a store row cap', () => {
    expect(loadConfig({ SWITCHYARD_STORE_MAX_ROW_CAP: '250000' }).storeMaxRowCap).toBe(250_000);
  });
});
