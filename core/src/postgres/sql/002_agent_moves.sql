-- R-MIG-4: the mark a move (`rotifer agent migrate`) leaves on an agent. NULL: the agent is in
-- use. `moved`: its memory went to another binding (this copy is kept, never used again);
-- `arriving`: a copy a move brought here, not yet named by the agent's record. While it is set,
-- `rotifer.lock_agent` refuses every call (RT010). Only the move's functions set or clear it.
SET LOCAL ROLE rotifer_owner;
ALTER TABLE rotifer.agents ADD COLUMN fence jsonb
  CHECK (fence IS NULL OR (jsonb_typeof(fence) = 'object' AND fence->>'state' IN ('moved', 'arriving')
         AND jsonb_typeof(fence->'move') = 'string' AND jsonb_typeof(fence->'binding') = 'string' AND jsonb_typeof(fence->'at') = 'string'));
RESET ROLE;
