// Progressive enhancement only: every page works without this file.
// A submitted form's buttons are disabled so a double click cannot send an action twice.
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || form.method.toLowerCase() !== 'post') return;
  setTimeout(() => {
    for (const button of form.querySelectorAll('button[type="submit"]')) {
      button.disabled = true;
      button.setAttribute('aria-busy', 'true');
    }
  }, 0);
});
