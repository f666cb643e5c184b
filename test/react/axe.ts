// Accessibility check for component tests: axe-core on a rendered container.
import axe from 'axe-core';

export async function axeViolations(container: Element): Promise<string[]> {
  const result = await axe.run(container, {
    // jsdom cannot compute colours or layout: contrast is checked in the browser tests instead.
    rules: { 'color-contrast': { enabled: false }, region: { enabled: false } },
  });
  return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
