import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { configIssues } from './support/config.js';

const REDIS_URL = 'redis://127.0.0.1:6379';

describe('loadConfig: the relay cluster', () => {
  it('is off unless CLUSTER_NODE_URL is set', () => {
    expect(loadConfig({}).cluster).toBeUndefined();
    expect(loadConfig({ REDIS_URL }).cluster).toBeUndefined();
  });

  it('takes the node id and region from Fly.io, else the host name; the URL is kept as its origin', () => {
    expect(loadConfig({ REDIS_URL, CLUSTER_NODE_URL: 'http://e2865641be9d86.vm.chat.internal:3001/', FLY_MACHINE_ID: 'e2865641be9d86', FLY_REGION: 'ams' }).cluster).toEqual({
      nodeId: 'e2865641be9d86',
      nodeUrl: 'http://e2865641be9d86.vm.chat.internal:3001',
      region: 'ams',
      redisUrl: REDIS_URL,
    });
    const own = loadConfig({ REDIS_URL, CLUSTER_NODE_URL: 'http://[fdaa::3]:3001', CLUSTER_NODE_ID: 'relay-1', CLUSTER_REGION: 'fra', FLY_MACHINE_ID: 'ignored', FLY_REGION: 'ams' }).cluster;
    expect(own).toMatchObject({ nodeId: 'relay-1', nodeUrl: 'http://[fdaa::3]:3001', region: 'fra' });
    const plain = loadConfig({ REDIS_URL, CLUSTER_NODE_URL: 'http://10.0.0.2:3001' }).cluster;
    expect(plain?.region).toBeUndefined();
    expect(plain?.nodeId).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);
    expect(hostname().startsWith(plain!.nodeId) || plain!.nodeId === 'node').toBe(true);
  });

  it('refuses a node URL without Redis, with a path, query or credentials, and bad ids and regions', () => {
    expect(configIssues({ CLUSTER_NODE_URL: 'http://10.0.0.2:3001' }).join('\n')).toMatch(/CLUSTER_NODE_URL: needs REDIS_URL/);
    for (const [name, value] of [
      ['CLUSTER_NODE_URL', 'http://10.0.0.2:3001/internal'],
      ['CLUSTER_NODE_URL', 'http://10.0.0.2:3001/?a=1'],
      ['CLUSTER_NODE_URL', 'http://user:pw@10.0.0.2:3001'],
      ['CLUSTER_NODE_URL', 'ftp://10.0.0.2'],
      ['CLUSTER_NODE_URL', `http://${'a'.repeat(300)}.example`],
      ['CLUSTER_NODE_ID', '-leading-dash'],
      ['CLUSTER_NODE_ID', 'a'.repeat(65)],
      ['CLUSTER_NODE_ID', 'node/1'],
      ['CLUSTER_REGION', 'AMS'],
      ['CLUSTER_REGION', 'x'.repeat(33)],
    ] as const) {
      expect(configIssues({ REDIS_URL, CLUSTER_NODE_URL: 'http://10.0.0.2:3001', [name]: value }).join('\n'), `${name}=${value}`).toContain(name);
    }
    expect(configIssues({ REDIS_URL, CLUSTER_NODE_URL: 'http://10.0.0.2:3001', FLY_MACHINE_ID: 'not an id!' }).join('\n')).toMatch(/FLY_MACHINE_ID: .*set CLUSTER_NODE_ID/);
  });
});
