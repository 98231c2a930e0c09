// k6 scenario for the defect showcase: every endpoint at a realistic mix of
// weights and sizes, each response checked against its specified outcomes
// (the planted 500s, 404s and slowness included). Run it while Prometheus
// scrapes the admin port:
//
//   k6 run -e BASE_URL=http://localhost:8080 -e RATE=50 -e DURATION=5m deploy/loadtest/showcase.js
//
// RATE is requests per second (default 20), DURATION how long (default 1m).
import http from 'k6/http';
import { check } from 'k6';

const BASE = __ENV.BASE_URL || 'http://localhost:8080';
const JSON_HEADERS = { headers: { 'Content-Type': 'application/json' } };

export const options = {
  scenarios: {
    mixed: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE || 20),
      timeUnit: '1s',
      duration: __ENV.DURATION || '1m',
      preAllocatedVUs: 20,
      maxVUs: 400,
    },
  },
  // Every answer is one the specification allows; anything else fails the run.
  thresholds: { checks: ['rate==1'] },
};

const pick = (xs) => xs[Math.floor(Math.random() * xs.length)];

// Each request: weight, name, how to send it, the statuses it may get.
// The planted outcomes are expected: they are what the showcase is for.
const requests = [
  [12, 'missing-field', () => http.get(`${BASE}/response-conformance/missing-field`), [200]],
  [8, 'unauthenticated-access', () => http.get(`${BASE}/security/unauthenticated-access`), [200]],
  [6, 'malformed-json', () => http.get(`${BASE}/response-conformance/malformed-json`), [200]],
  [6, 'incorrect-content-type', () => http.get(`${BASE}/response-conformance/incorrect-content-type`), [200]],
  [8, 'undocumented-status-code', () => http.get(`${BASE}/response-conformance/undocumented-status-code?id=${pick(['0', '0', '1', '42', 'abc'])}`), [200, 404]],
  [10, 'improper-input-type-handling', () => http.post(`${BASE}/internal-server-errors/improper-input-type-handling`,
    JSON.stringify({ number: pick(['79927398713', '4539148803436467', '1234567812345678', '1234-5678', 79927398713]) }), JSON_HEADERS), [200, 500]],
  [10, 'exceeding-column-size', () => http.post(`${BASE}/internal-server-errors/exceeding-column-size`,
    JSON.stringify({ text: 'x'.repeat(pick([1, 8, 15, 16, 40, 255])) }), JSON_HEADERS), [200, 500]],
  [10, 'improper-unicode-encoding', () => http.post(`${BASE}/internal-server-errors/improper-unicode-encoding`,
    JSON.stringify({ text: pick(['hello', 'plain ascii text', 'héllo', 'naïve café', '😀']) }), JSON_HEADERS), [200, 500]],
  [15, 'unbounded-result-set', () => http.get(`${BASE}/performance/unbounded-result-set?limit=${pick([10, 50, 100, 250, 500, 1000])}`), [200]],
  [5, 'inefficient-algorithm', () => http.get(`${BASE}/performance/inefficient-algorithm?n=${pick([10, 100, 1000, 5000, 10000, 30000])}&searchTerm=${pick([0, 1, 55, 6765])}`), [200, 503]],
  [5, 'bad input', () => http.get(`${BASE}/performance/inefficient-algorithm?n=ten&searchTerm=1`), [400]],
  [5, 'unknown path', () => http.get(`${BASE}/no-such-path/${Math.floor(Math.random() * 1e6)}`), [404]],
];
const total = requests.reduce((s, r) => s + r[0], 0);

export default function () {
  let x = Math.random() * total;
  for (const [weight, name, send, statuses] of requests) {
    x -= weight;
    if (x < 0) {
      const res = send();
      check(res, { [`${name}: specified status`]: (r) => statuses.includes(r.status) });
      return;
    }
  }
}
