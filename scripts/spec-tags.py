#!/usr/bin/env python3
# Rewrites the `// Verifies: ID, ...` line above every test a spec clause names, from specs/*.md.
# The tidy test (tests/tests/spec_tidy.rs) fails when the two disagree; run this after editing a
# clause's `Verified by:` line.
import re, os, glob, collections
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
specs = glob.glob(os.path.join(ROOT, 'specs/*.md'))
test_ids = collections.defaultdict(list)
for p in specs:
    cur = None
    for line in open(p):
        m = re.match(r'^#+ +([A-Z][A-Z0-9]*-[0-9]+)', line)
        if m: cur = m.group(1); continue
        if cur and line.startswith('Verified by:'):
            for name in line[len('Verified by:'):].split(','):
                name = name.strip().rstrip('.')
                if name: test_ids[name].append(cur)
files = [f for f in glob.glob(os.path.join(ROOT, '**/*.rs'), recursive=True) if '/target/' not in f and '/node_modules/' not in f]
found = set()
for f in files:
    lines = open(f).read().split('\n')
    out = []
    changed = False
    i = 0
    # strip previous tags
    lines = [l for l in lines if not re.match(r'^\s*// Verifies: ', l)]
    res = []
    for idx, l in enumerate(lines):
        m = re.match(r'^(\s*)(pub )?(async )?fn ([a-z0-9_]+)[(<]', l)
        if m and m.group(4) in test_ids:
            # find insertion point: walk back over attributes and doc comments
            j = len(res)
            while j > 0 and (res[j-1].strip().startswith('#[') or res[j-1].strip().startswith('///')):
                j -= 1
            ids = sorted(set(test_ids[m.group(4)]), key=lambda s: (s.split('-')[0], int(s.split('-')[1])))
            res.insert(j, f"{m.group(1)}// Verifies: {', '.join(ids)}")
            found.add(m.group(4)); changed = True
        res.append(l)
    if changed:
        open(f, 'w').write('\n'.join(res))
missing = set(test_ids) - found
print("tagged", len(found), "missing", missing)
