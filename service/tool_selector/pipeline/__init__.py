"""The request pipeline, framework-free: body bytes -> one decode -> the catalog store (looked
up once; it owns every cache) -> ranking -> the contract's answer bytes. Also the background
embedding jobs and the warm-up file."""
