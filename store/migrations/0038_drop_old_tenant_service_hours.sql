-- tenant_service_hours as it was before 0036.
DROP TABLE IF EXISTS tenant_service_hours_swap
