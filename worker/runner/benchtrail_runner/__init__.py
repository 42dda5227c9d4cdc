"""The runner: turns a plan into load-tool runs against each variant's target, samples the targets'
resources meanwhile and checks that each step measured what it was asked to.

Pure of DB and HTTP frameworks so a Celery task (`runs.execute`) can call it as plain functions:
`plan.load_plan` -> `execute.execute_plan` -> raw output files + resource summaries + validity checks.
"""
