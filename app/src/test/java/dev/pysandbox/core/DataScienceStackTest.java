package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.SharedServiceTest;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.backend.InterpreterProbe;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The data-science stack users expect (issue 23, item 15), as scripts/setup.sh installs it, in real
 * bwrap sandboxes under the shipped import policy: in the data_science tier each package does
 * something small (a scikit-learn fit, a statsmodels OLS, an xlsx written and read back in
 * /mnt/data, a plotly figure as HTML, a reportlab PDF, a seaborn plot), every shipped tier without
 * network imports all of them, and check_setup reports each with its version.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Sandboxed
class DataScienceStackTest extends SharedServiceTest {

  @Test
  void dataScienceTier_eachPackageDoesSomethingSmall_inARealSandbox() {
    String code =
        String.join(
            "\n",
            "import os",
            "import numpy as np, pandas as pd",
            "from sklearn.linear_model import LinearRegression",
            "x = np.arange(10).reshape(-1, 1); y = 2 * x.ravel() + 1",
            "print('sklearn', round(float(LinearRegression().fit(x, y).coef_[0]), 6))",
            "import statsmodels.api as sm",
            "ols = sm.OLS(y, sm.add_constant(x.ravel())).fit()",
            "print('statsmodels', [round(float(v), 6) for v in ols.params])",
            "import openpyxl",
            "wb = openpyxl.Workbook(); wb.active['A1'] = 42; wb.save('/mnt/data/t.xlsx')",
            "print('openpyxl', openpyxl.load_workbook('/mnt/data/t.xlsx').active['A1'].value)",
            "import plotly.graph_objects as go",
            "go.Figure(go.Bar(x=[1, 2], y=[3, 4])).write_html('/mnt/data/f.html',"
                + " include_plotlyjs=False)",
            "print('plotly', '<html>' in open('/mnt/data/f.html').read())",
            "from reportlab.pdfgen import canvas",
            "c = canvas.Canvas('/mnt/data/r.pdf'); c.drawString(100, 750, 'hello'); c.save()",
            "print('reportlab', open('/mnt/data/r.pdf', 'rb').read(5))",
            "import seaborn as sns",
            "ax = sns.barplot(x=['a', 'b'], y=[1, 2]); ax.figure.savefig('/mnt/data/s.png')",
            "print('seaborn', os.path.getsize('/mnt/data/s.png') > 0)");

    RunRecord r =
        service.run(
            new ExecutionRequest(code, null, "stack", 180, "data_science", null, false, List.of()));

    assertThat(r.status()).as("%s\n%s", r.error(), r.stderr()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout())
        .isEqualTo(
            "sklearn 2.0\nstatsmodels [1.0, 2.0]\nopenpyxl 42\nplotly True\n"
                + "reportlab b'%PDF-'\nseaborn True\n");
    assertThat(r.artifacts())
        .extracting(dev.pysandbox.api.Artifact::path)
        .contains("t.xlsx", "f.html", "r.pdf", "s.png");
  }

  @ParameterizedTest
  @ValueSource(strings = {"basic", "filesystem"})
  void everyTierWithoutNetwork_importsTheWholeStack(String tier) {
    String code = "import seaborn, sklearn, statsmodels.api, openpyxl, plotly.express, reportlab";

    RunRecord r =
        service.run(new ExecutionRequest(code, null, "imports", 180, tier, null, false, List.of()));

    assertThat(r.status()).as("%s\n%s", r.error(), r.stderr()).isEqualTo(RunStatus.SUCCEEDED);
  }

  @Test
  void checkSetup_reportsEachPackageWithItsVersion_andNoneMissing() {
    SetupReport report = service.checkSetup();

    @SuppressWarnings("unchecked")
    Map<String, String> packages = (Map<String, String>) report.interpreter().get("packages");
    assertThat(packages.keySet())
        .containsExactlyElementsOf(InterpreterProbe.EXPECTED_PACKAGES)
        .contains("seaborn", "scikit-learn", "statsmodels", "openpyxl", "plotly", "reportlab");
    assertThat(packages.values()).allSatisfy(v -> assertThat(v).isNotBlank());
    assertThat(report.problems()).noneMatch(p -> p.startsWith("Python package "));
    assertThat(InterpreterProbe.debianPackage("scikit-learn")).isEqualTo("python3-sklearn");
  }
}
