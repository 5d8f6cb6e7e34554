import { test } from 'node:test';
import assert from 'node:assert/strict';
import { confinementOf } from '../webview/transcript';

// Verifies: VSC-93
test("a run card's header says whether the run was confined, the server's sentence in the hover", () => {
  const confined = 'ran cargo test: cargo: exit 0 after 1.2 s; confined: it could write only inside the workspace (no .git, no file that configures your tools) and reach no network';
  assert.deepEqual(confinementOf(confined), { word: 'confined', said: 'confined: it could write only inside the workspace (no .git, no file that configures your tools) and reach no network' });
  const open = 'ran make: make: exit 2 after 0.1 s; not confined: it ran with your access';
  assert.deepEqual(confinementOf(open), { word: 'not confined', said: 'not confined: it ran with your access' });
  // A command whose own words say "; confined: " is not taken for the server's: the last one wins.
  const tricky = "ran echo '; confined: x': echo: exit 0 after 0.0 s; not confined: it ran with your access";
  assert.equal(confinementOf(tricky)?.word, 'not confined');
  const tricky2 = "ran echo '; not confined: x': echo: exit 0 after 0.0 s; confined: it could write only inside the workspace";
  assert.equal(confinementOf(tricky2)?.word, 'confined');
  assert.equal(confinementOf('read 3 lines'), undefined);
  assert.equal(confinementOf(undefined), undefined);
});
