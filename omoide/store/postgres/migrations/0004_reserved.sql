-- 0004: reserved for the jiuwen-admin branch (migration numbers are assigned per branch).
-- This placeholder only keeps the numbering contiguous on the pg-store branch, so that its
-- 0005 can run; the integrator replaces it with that branch's 0004 when merging both.
SELECT 1;
