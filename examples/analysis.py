"""Example analysis: a small sales table, summarised with pandas, charted with matplotlib.

Runs inside the sandbox: no network, the working directory is /mnt/data, and the files
written there are kept with the run.
"""
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt

rng = np.random.default_rng(seed=7)
days = pd.date_range("2026-01-01", periods=120, freq="D")
sales = pd.DataFrame({
    "day": days,
    "region": rng.choice(["north", "south", "east", "west"], size=len(days)),
    "units": rng.poisson(lam=40, size=len(days)),
    "price": rng.normal(loc=12.5, scale=1.5, size=len(days)).round(2),
})
sales["revenue"] = sales["units"] * sales["price"]

print("Summary of", len(sales), "days of sales:")
print(sales[["units", "price", "revenue"]].describe().round(2).to_string())

by_region = sales.groupby("region")["revenue"].agg(["count", "sum", "mean"]).round(1)
print("\nRevenue by region:")
print(by_region.to_string())
by_region.to_csv("revenue_by_region.csv")

weekly = sales.set_index("day")["revenue"].resample("W").sum()
fig, ax = plt.subplots(figsize=(8, 4))
weekly.plot(ax=ax, marker="o")
ax.set_title("Weekly revenue")
ax.set_ylabel("revenue")
fig.tight_layout()
fig.savefig("weekly_revenue.png", dpi=100)
print("\nSaved weekly_revenue.png and revenue_by_region.csv in", __import__("os").getcwd())

__outputs__["total_revenue"] = round(float(sales["revenue"].sum()), 2)
__outputs__["best_region"] = by_region["sum"].idxmax()
by_region["sum"].idxmax()
