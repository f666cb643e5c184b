// Every story with the components' stylesheet, the a11y addon checking each one, and a padded
// canvas so the components sit as they would in a host page.
import type { Preview } from '@storybook/react-vite';
import '../src/react/styles.css';

const preview: Preview = {
  parameters: {
    layout: 'padded',
    controls: { expanded: true },
    // Accessibility violations fail the story in the test runner, not only in the panel.
    a11y: { test: 'error' },
  },
};

export default preview;
