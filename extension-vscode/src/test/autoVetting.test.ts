import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bannerText, statusText, vettingPicks, vettingSetWords } from '../autoVetting';
import { addOpeningBanner, addUser, applyUpdate, emptyTranscript, resumedTranscript } from '../webview/transcript';

// Verifies: VSC-120
test('a session that opened with auto-vetting on says so at the top of the chat, naming its switch; one asking as usual says nothing', () => {
  // VS Code opens a session on its first prompt: the banner goes above that prompt.
  const sent = addUser(emptyTranscript(), 'build it');
  const t = addOpeningBanner(sent, true, '~/.bravebot/vetting');
  assert.deepEqual(t.items.map((i) => i.kind), ['autoVetting', 'user']);
  const banner = t.items[0];
  assert.ok(banner.kind === 'autoVetting' && banner.opening && banner.on);
  assert.match(banner.kind === 'autoVetting' ? banner.text : '', /^Auto-vetting is on \(your recorded choice in ~\/\.bravebot\/vetting\): where a check finds nothing/);
  assert.match(bannerText({ on: true, source: '--vet' }, true) ?? '', /bravebot exec --vet/);
  assert.match(bannerText({ on: true, source: '~/.bravebot/settings.json' }, true) ?? '', /vetting\.auto in ~\/\.bravebot\/settings\.json/);
  // Off at the opening: nothing drawn, nothing in the status bar.
  assert.deepEqual(addOpeningBanner(sent, false, 'default'), sent);
  assert.equal(bannerText({ on: false, source: 'default' }, true), undefined);
  assert.equal(statusText({ on: false, source: '~/.bravebot/vetting' }), undefined);
  assert.equal(statusText(undefined), undefined);
  assert.deepEqual(statusText({ on: true, source: '--vet' }), { text: '$(shield) auto-vetting', tooltip: 'Auto-vetting is on, from bravebot exec --vet' });
  // A resumed session with the mode on carries the banner under its first line.
  const resumed = resumedTranscript({ sessionId: 's', title: 't', cwd: '/w', mode: 'ask', autoVetting: { on: true, source: '~/.bravebot/vetting' }, transcript: [] });
  assert.deepEqual(resumed.items.map((i) => i.kind), ['notice', 'autoVetting', 'notice']);
  const plain = resumedTranscript({ sessionId: 's', title: 't', cwd: '/w', mode: 'ask', autoVetting: { on: false, source: 'default' }, transcript: [] });
  assert.ok(!plain.items.some((i) => i.kind === 'autoVetting'));
});

// Verifies: VSC-121
test('auto-vetting turned on or off mid-session is said in the chat where it happened', () => {
  let t = addUser(emptyTranscript(), 'go');
  t = applyUpdate(t, { kind: 'agentText', delta: 'looking' });
  t = applyUpdate(t, { kind: 'autoVetting', on: true, source: '~/.bravebot/vetting' });
  t = applyUpdate(t, { kind: 'autoVetting', on: false, source: '~/.bravebot/vetting' });
  assert.deepEqual(t.items.map((i) => i.kind), ['user', 'agent', 'autoVetting', 'autoVetting']);
  const [on, off] = t.items.slice(2);
  assert.ok(on.kind === 'autoVetting' && !on.opening && on.text.startsWith('Auto-vetting is now on (your recorded choice in ~/.bravebot/vetting)'));
  assert.ok(off.kind === 'autoVetting' && off.text.startsWith('Auto-vetting is now off') && off.text.includes('you are asked again'));
});

// Verifies: VSC-122
test('the Auto-Vetting command offers off and on, marks the current one, and says where the choice was recorded', () => {
  const picks = vettingPicks({ on: true, source: '~/.bravebot/settings.json' });
  assert.deepEqual(picks.map((p) => [p.label, p.on]), [['Off', false], ['On (now)', true]]);
  assert.match(picks[1].description, /~\/\.bravebot\/vetting/);
  assert.deepEqual(vettingPicks(undefined).map((p) => p.label), ['Off', 'On']);
  assert.match(vettingSetWords(false, '/home/me/.bravebot/vetting'), /^bravebot: auto-vetting is off, recorded in \/home\/me\/\.bravebot\/vetting/);
  assert.match(vettingSetWords(true, '/h/.bravebot/vetting'), /is on, recorded in/);
});
