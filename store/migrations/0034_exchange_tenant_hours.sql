-- The copy of 0033 becomes tenant_hours; the table it replaces is left as tenant_hours_swap for 0035.
EXCHANGE TABLES tenant_hours AND tenant_hours_swap
