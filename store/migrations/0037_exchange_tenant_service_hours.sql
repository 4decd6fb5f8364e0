-- The copy of 0036 becomes tenant_service_hours; the table it replaces is left as tenant_service_hours_swap for 0038.
EXCHANGE TABLES tenant_service_hours AND tenant_service_hours_swap
