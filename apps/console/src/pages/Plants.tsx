import { FormEvent, useState } from 'react';
import { navigate } from '../router';

/** A plant's deliveries, by its id (the plant itself is on the read API, which takes a webhook token). */
export function Plants({ params }: { params: URLSearchParams }) {
  const [id, setId] = useState(params.get('id') ?? '');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    navigate(`/deliveries?plantId=${encodeURIComponent(id.trim())}`);
  };
  return (
    <>
      <h1>Plants</h1>
      <form onSubmit={submit} aria-label="Find a plant's deliveries">
        <label>
          Plant id
          <input value={id} onChange={(e) => setId(e.target.value)} inputMode="numeric" required />
        </label>
        <button className="primary" type="submit">
          Show its deliveries
        </button>
      </form>
    </>
  );
}
