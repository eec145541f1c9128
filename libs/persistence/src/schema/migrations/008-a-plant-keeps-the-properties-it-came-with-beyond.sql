-- a plant keeps the properties it came with beyond id, name and tag
-- The published NewPlant allows more properties than id, name and tag; they used to be accepted and then
-- dropped. Now they are stored, returned by the read API and delivered. A constant default: no rewrite.

      ALTER TABLE plants ADD COLUMN extra jsonb NOT NULL DEFAULT '{}';
