import json, os, re, subprocess, sys
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.abspath(sys.argv[1])
ex = json.load(open(sys.argv[2]))
t = open(os.path.join(HERE, 'protocol.tmpl.md')).read()

def req_line(name):
    r = ex[name][0]
    assert r.endswith('\n'), name
    r = r[:-1]
    if name == 'limit_crlf':
        assert r.endswith('\r')
        return r[:-1]
    assert not r.endswith('\r'), name
    return r

def resp_line(name):
    r = ex[name][1]
    assert r is not None and r.endswith('\n') and r.count('\n') == 1, name
    return r[:-1]

def ex_block(names):
    parts = []
    for n in names:
        if ex[n][1] is None:
            parts.append(req_line(n))
        else:
            parts.append(req_line(n) + '\n' + resp_line(n))
    return '```\n' + '\n\n'.join(parts) + '\n```'

def pretty(name):
    v = json.loads(resp_line(name))
    return '```json\n' + json.dumps(v, indent=2, ensure_ascii=False) + '\n```'

def raw(name):
    return '```\n' + ex[name][0].rstrip('\n') + '\n```'

def cmd(which):
    if which == 'check-ok':
        p = subprocess.run([BIN, 'check-config', '--config', 'config.yaml'], cwd=ROOT, capture_output=True, text=True)
        assert p.returncode == 0
        return '```\n$ payservice check-config --config config.yaml\n' + p.stdout.rstrip('\n') + '\n$ echo $?\n0\n```'
    if which == 'check-broken':
        p = subprocess.run([BIN, 'check-config', '--config', 'docs/protocol/configs/broken.yaml'], cwd=ROOT, capture_output=True, text=True)
        assert p.returncode == 2 and p.stdout == ''
        return '```\n$ payservice check-config --config docs/protocol/configs/broken.yaml\n' + p.stderr.rstrip('\n') + '\n$ echo $?\n2\n```'
    if which == 'store-bad':
        p = subprocess.run([BIN, '--config', 'config.yaml', '--database', '/nonexistent/dir/orders.sqlite'], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert p.returncode == 2
        return '```\n$ payservice --database /nonexistent/dir/orders.sqlite < requests.jsonl\n' + p.stderr.rstrip('\n') + '\n$ echo $?\n2\n```'
    if which == 'check-stripe':
        env = dict(os.environ, STRIPE_SECRET_KEY='sk_test_' + 'x' * 24)
        p = subprocess.run([BIN, 'check-config', '--config', 'docs/protocol/configs/stripe.yaml'], cwd=ROOT, capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        lines = [l for l in p.stdout.splitlines() if l.startswith(('gateway', '  stripe', '  calls', '  webhooks'))]
        return '```\n$ STRIPE_SECRET_KEY=sk_test_… payservice check-config --config docs/protocol/configs/stripe.yaml\n…\n' + '\n'.join(lines) + '\n…\n```'
    if which == 'stripe-live':
        env = dict(os.environ, STRIPE_SECRET_KEY='sk_live_' + 'x' * 24)
        p = subprocess.run([BIN, '--config', 'docs/protocol/configs/stripe.yaml', '--database', ':memory:'], cwd=ROOT, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        assert p.returncode == 2 and p.stdout == '' and 'sk_live_' not in p.stderr
        return '```\n$ STRIPE_SECRET_KEY=sk_live_… payservice --config docs/protocol/configs/stripe.yaml\n' + p.stderr.rstrip('\n') + '\n$ echo $?\n2\n```'
    if which == 'stripe-secret':
        p = subprocess.run([BIN, 'check-config', '--config', 'docs/protocol/configs/stripe-secret.yaml'], cwd=ROOT, capture_output=True, text=True)
        assert p.returncode == 2 and 'sk_test_51Hc0ffee' not in p.stderr
        return '```\n$ payservice check-config --config docs/protocol/configs/stripe-secret.yaml\n' + p.stderr.rstrip('\n') + '\n$ echo $?\n2\n```'
    if which in ('discover', 'tools'):
        # Through jq, as a reader would run them; the document and the list are too long to print whole.
        line = {'discover': "payservice call rpc.discover | jq -c '.methods[] | {name, params: [.params[].name], errors: [.errors[].code], examples: [.examples[].name]}'",
                'tools': "payservice call tools/list | jq -c '.tools[] | {name, annotations}'"}[which]
        method = {'discover': 'rpc.discover', 'tools': 'tools/list'}[which]
        shell = f"{BIN} call {method} --config config.yaml | jq -c {line.split('jq -c ', 1)[1]}"
        p = subprocess.run(['bash', '-c', 'set -o pipefail; ' + shell], cwd=ROOT, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return '```\n$ ' + line + '\n' + p.stdout.rstrip('\n') + '\n```'
    raise KeyError(which)

def golden(case, ids):
    """Request and response pairs of a golden transcript (Tests/EndToEndTests/Golden/<case>), which
    the tests check byte for byte against the binary on every run."""
    folder = os.path.join(ROOT, 'Tests', 'EndToEndTests', 'Golden', case)
    def by_id(name):
        lines = {}
        for line in open(os.path.join(folder, name), encoding='utf-8').read().split('\n'):
            if line.strip() and not line.startswith('#'):
                try:
                    parsed = json.loads(line)
                except ValueError:
                    continue  # a template's line (a token filled in by its test), never shown
                lines.setdefault(parsed.get('id'), line)
        return lines
    # A case whose config changes between steps (Golden/reload) keeps its requests in steps.jsonl;
    # one run as several processes (Golden/merchant-tokens) in numbered files, 1-….jsonl and on.
    steps = os.path.exists(os.path.join(folder, 'steps.jsonl'))
    numbered = sorted(f for f in os.listdir(folder) if re.match(r'[0-9]+-.*\.jsonl$', f))
    if numbered:
        requests = {}
        for name in numbered:
            requests.update(by_id(name))
    else:
        requests = by_id('steps.jsonl' if steps else 'requests.jsonl')
    responses = by_id('responses.jsonl')
    key = lambda i: int(i) if i.isdigit() else i
    return '```\n' + '\n\n'.join(requests[key(i)] + '\n' + responses[key(i)] for i in ids) + '\n```'

def repl(m):
    kind, arg = m.group(1), m.group(2).split()
    if kind == 'golden': return golden(arg[0], arg[1:])
    if kind == 'ex': return ex_block(arg)
    if kind == 'pretty': return pretty(arg[0])
    if kind == 'raw': return raw(arg[0])
    if kind == 'cmd': return cmd(arg[0])
    raise KeyError(kind)

out = re.sub(r'@@(ex|pretty|raw|cmd|golden) ([^@]+)@@', repl, t)
assert '@@' not in out
open(os.path.join(ROOT, 'protocol.md'), 'w').write(out)
print('written', len(out.splitlines()), 'lines')
