// The renderer's entry: start the session (events, connection, first load) outside React, then
// mount the app. The session lives in the core, so a reload picks up where it was.
import './api/zod-without-eval.ts';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './components/App.tsx';
import { startSession } from './store/actions/session-actions.ts';
import './styles/app.css';

startSession();

const root = document.getElementById('app');
if (root === null) throw new Error('index.html lacks the #app element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
