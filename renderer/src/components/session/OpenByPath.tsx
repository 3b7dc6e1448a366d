// Opening an engine, a reference bundle or a captured run by path (the core reads paths on its
// own machine, so there is no file picker here), with the recent paths offered as suggestions.
import { useId, useState, type FormEvent } from 'react';

interface OpenByPathProps {
  label: string;
  placeholder: string;
  recent: readonly string[];
  disabled: boolean;
  testId: string;
  onOpen: (path: string) => Promise<boolean>;
}

export function OpenByPath({ label, placeholder, recent, disabled, testId, onOpen }: OpenByPathProps) {
  const [path, setPath] = useState('');
  const listId = useId();
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    const trimmed = path.trim();
    if (trimmed === '') return;
    void onOpen(trimmed).then((ok) => {
      if (ok) setPath('');
    });
  };
  return (
    <form className="open-by-path" onSubmit={submit} data-testid={testId}>
      <input
        type="text"
        value={path}
        placeholder={placeholder}
        list={listId}
        spellCheck={false}
        aria-label={`${label} path`}
        onChange={(event) => setPath(event.target.value)}
      />
      <datalist id={listId}>
        {recent.map((entry) => (
          <option key={entry} value={entry} />
        ))}
      </datalist>
      <button type="submit" disabled={disabled || path.trim() === ''}>
        {label}
      </button>
    </form>
  );
}
